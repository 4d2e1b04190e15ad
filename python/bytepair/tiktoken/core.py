"""``tiktoken.core``: the Encoding class. It is :class:`bytepair.Encoding` itself, so an
object made through either name is the same type (``isinstance`` checks hold both ways)."""

from bytepair.encoding import Encoding

__all__ = ["Encoding"]
