"""dlqlens."""
