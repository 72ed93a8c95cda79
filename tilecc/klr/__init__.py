"""KLR: the kernel IR traced from NKI kernels (ast), its JSON reader / writer (read)."""
