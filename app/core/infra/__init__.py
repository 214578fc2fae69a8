"""Infrastructure every domain uses: errors, atomic JSON files, paths, settings, jobs."""
