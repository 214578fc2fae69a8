"""Plain data files (style sheet, icons, catalog tables), read with importlib.resources."""
