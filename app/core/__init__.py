"""Pure domain logic. Imports neither Qt nor MNN (enforced by import-linter)."""
