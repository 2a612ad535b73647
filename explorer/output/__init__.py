"""What a result looks like: TLC's text, JSON, ITF and graphviz (traces), the spec's views as grids
(views), the HTML pages (report, templates/), and the TLA+ export (tla/)."""
