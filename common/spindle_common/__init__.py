"""Code shared by every Spindle service. Nothing else is shared by copy."""
