"""mrope inside other runtimes: transformers (mrope.integrations.transformers.enable()).

Each runtime's module is imported on its own; this package imports none of them."""
