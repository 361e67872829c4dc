"""Fact models, one module per domain. Importing a module registers its fact types."""
