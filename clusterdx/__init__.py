"""clusterdx: why is this GPU training cluster slower than its reference?"""

__version__ = "0.1.0"
