"""One module per tool format; each exposes ``FORMATS`` (see clusterdx.facts.formats)."""
