"""What bounds and shows a run, below everything else: limits on a clock (time, memory, signals)
and the progress line. Imports nothing of the explorer's."""
