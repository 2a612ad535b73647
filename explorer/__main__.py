from explorer.cli import run

run()
