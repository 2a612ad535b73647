"""How states are searched: every back end takes a `Model` and `Limits` and returns the same
`Result` (result): the exact breadth-first search (search), the same by fingerprint (fpsearch,
fingerprints, frontier) on processes or Ray actors (workers, ray_backend, pools), temporal
properties (liveness), random behaviours (simulate), a given trace (replay); `explore` picks one
for the command line's options."""
