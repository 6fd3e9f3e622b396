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
    policy: Optional[PathLike] = ...,
    input_format: str = ...,
    threads: Optional[int] = ...,
    max_line_bytes: Optional[int] = ...,
    top: int = ...,
    group_by: Optional[str] = ...,
    seed: int = ...,
    iterations: int = ...,
) -> Dict[str, Any]: ...
