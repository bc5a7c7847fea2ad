"""What players see, built from engine values: embeds, card pictures, the table and charts."""
