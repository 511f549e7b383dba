import numpy as np
import numpy.typing as npt

BLOCK: int
MAX_DIMENSION: int

def supported() -> bool: ...
def scan(
    codes: npt.NDArray[np.int8],
    d: int,
    query: npt.NDArray[np.int8],
    offsets: npt.NDArray[np.float32],
    units: float,
    out: npt.NDArray[np.float32],
) -> None: ...
