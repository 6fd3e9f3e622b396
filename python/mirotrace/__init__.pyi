import os
from typing import Any, Dict, Iterable, Optional, Sequence, Union

import pyarrow as pa

__version__: str

PathLike = Union[str, os.PathLike[str]]
Source = Union[PathLike, Sequence[PathLike], pa.Table, pa.RecordBatch]

class SkippedInputWarning(UserWarning): ...

def lines_table(lines: Iterable[str], file: str = ..., first_line: int = ...) -> pa.Table: ...
def replay(
    source: Optional[Source] = ...,
    *,
    lines: Optional[Iterable[str]] = ...,
    policy: Optional[PathLike] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
) -> pa.Table: ...
def analyze(
    source: Optional[Source] = ...,
    *,
    lines: Optional[Iterable[str]] = ...,
    files: Optional[Sequence[str]] = ...,
    policy: Optional[PathLike] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
    top: int = ...,
    group_by: Optional[str] = ...,
    seed: int = ...,
    iterations: int = ...,
) -> Dict[str, Any]: ...

class Partial:
    @classmethod
    def from_bytes(cls, data: bytes) -> Partial: ...
    @classmethod
    def load(cls, path: PathLike) -> Partial: ...
    def to_bytes(self) -> bytes: ...
    def save(self, path: PathLike) -> None: ...
    def merge(self, other: Partial) -> Partial: ...
    def __add__(self, other: Partial) -> Partial: ...
    def report(self, threads: Optional[int] = ...) -> Dict[str, Any]: ...
    def render(self, format: str = ..., threads: Optional[int] = ...) -> str: ...
    @property
    def traces(self) -> int: ...

def partial(
    source: Optional[Source] = ...,
    *,
    lines: Optional[Iterable[str]] = ...,
    files: Optional[Sequence[str]] = ...,
    policy: Optional[PathLike] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
    top: int = ...,
    group_by: Optional[str] = ...,
    seed: int = ...,
    iterations: int = ...,
) -> Partial: ...
def merge(partials: Iterable[Union[Partial, bytes]]) -> Partial: ...
