"""Conformance: replay traces of spec/collector.spec on NeMo RL's real trajectory collector.

`mapping` (no NeMo RL) turns a trace into driver commands and the fields to compare; `nemo` imports
the real modules from a source tree; `harness` drives them; `replay` follows a trace and reports;
`results` replays every committed trace into RESULTS.md. See README.md in this folder."""
