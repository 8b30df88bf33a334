"""Coverage-guided fuzz targets (atheris) for every parser of untrusted input: `./dev fuzz --list`."""
