"""The S2S Observer's module under its old name: it is ``s3p_codec.s2s.observer`` now, as in the
other protocol packages. Kept so that ``from s3p_codec.s2s.observe import Observer`` still works.
"""

from s3p_codec.s2s.observer import Observer, ObserverEvent

__all__ = ["Observer", "ObserverEvent"]
