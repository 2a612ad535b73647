"""The native engine: the checked spec compiled to C and searched there (docs/engine.md).
`codegen` writes the C, `loader` compiles and loads it, `search` runs it and reports the result
the Python engine would; `runtime.c` (values) and `search.c` (the breadth-first search) are the
hand-written C the generated code is placed between."""
