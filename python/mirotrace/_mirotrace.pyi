"""The native module; use the functions of `mirotrace` instead (its own
types are in `mirotrace/__init__.py`, annotated inline; `py.typed` marks them)."""

from typing import List, Optional, Tuple

# The defaults of `top`, `seed` and `iterations` (the CLI's).
DEFAULT_TOP: int
DEFAULT_SEED: int
DEFAULT_ITERATIONS: int

def replay(
    *,
    paths: Optional[List[str]] = ...,
    table: Optional[bytes] = ...,
    policy: Optional[str] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
    trace_header: Optional[str] = ...,
) -> Tuple[bytes, List[str]]: ...
def version() -> str: ...
def trace_ordinals(
    table: bytes,
    *,
    input_format: str = ...,
    max_line_bytes: Optional[int] = ...,
) -> List[Optional[int]]: ...
def inputs(
    paths: List[str],
    *,
    input_format: str = ...,
    max_line_bytes: Optional[int] = ...,
) -> Tuple[List[Tuple[str, str, bool]], List[str]]: ...

class Partial:
    @staticmethod
    def from_bytes(data: bytes) -> Partial: ...
    def to_bytes(self) -> bytes: ...
    def merge(self, other: Partial) -> Partial: ...
    def render(self, format: str = ..., threads: Optional[int] = ...) -> str: ...
    @property
    def traces(self) -> int: ...

def partial(
    *,
    paths: Optional[List[str]] = ...,
    table: Optional[bytes] = ...,
    files: Optional[List[str]] = ...,
    policy: Optional[str] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
    trace_header: Optional[str] = ...,
    top: int = ...,
    group_by: Optional[str] = ...,
    seed: int = ...,
    iterations: int = ...,
) -> Tuple[Partial, List[str]]: ...
