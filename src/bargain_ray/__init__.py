"""bargain_ray: run negotiation experiments between language models on Ray."""

__version__ = "0.1.0"
