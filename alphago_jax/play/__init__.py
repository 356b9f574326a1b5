"""Playing: GTP engine and client, arena, terminal play."""
