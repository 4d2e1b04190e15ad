"""Vocabulary file formats, one module each: what the bytes mean, how to read and write them."""
