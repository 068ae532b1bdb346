"""Compiled CPU kernels of the cloud engine (numba), called through cloud/attention_backend.py."""
