"""Many searches at once: grids of constants (grid), their order, skipping and cache (sweep), the
verdict matrix and trace sets (matrix), and the comparison with TLC (crosscheck)."""
