"""The fuzz targets: one module each, with a module-level `TARGET` (`fuzz.harness.Target`)."""
