"""libstdc++'s std::sort and std::stable_sort written out sequentially, element by element,
from the algorithm's description (introsort with median of three and unguarded partition,
heap sort at the depth limit, final insertion sort; merge sort with a half-size buffer):
the reference the interpreter's vectorized replays (tilecc.hlo.interp.std_sort /
std_stable_sort) are held to. `comp(a, b)` compares two items; items are returned
reordered. Reading outside the range (a comparator that is no strict weak ordering)
raises IndexError."""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")
Comp = Callable[[T, T], bool]


def std_sort(items: list[T], comp: Comp) -> list[T]:
    a = list(items)
    n = len(a)

    def at(k: int) -> T:
        if not 0 <= k < n:
            raise IndexError(k)
        return a[k]

    def median_to_first(result: int, x: int, y: int, z: int) -> None:
        if comp(a[x], a[y]):
            pick = y if comp(a[y], a[z]) else z if comp(a[x], a[z]) else x
        else:
            pick = x if comp(a[x], a[z]) else z if comp(a[y], a[z]) else y
        a[result], a[pick] = a[pick], a[result]

    def partition(first: int, last: int, pivot: int) -> int:
        while True:
            while comp(at(first), a[pivot]):
                first += 1
            last -= 1
            while comp(a[pivot], at(last)):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                a[first:last] = heap_sort(a[first:last], comp)
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(last: int) -> None:
        val = a[last]
        while comp(val, at(last - 1)):
            a[last] = a[last - 1]
            last -= 1
        a[last] = val

    if n < 2:
        return a
    introsort(0, n, 2 * (n.bit_length() - 1))
    for i in range(1, min(n, 16)):  # __insertion_sort on the first 16
        if comp(a[i], a[0]):
            a[0:i + 1] = [a[i]] + a[0:i]
        else:
            linear_insert(i)
    for i in range(16, n):  # __unguarded_insertion_sort on the rest
        linear_insert(i)
    return a


def heap_sort(items: list[T], comp: Comp) -> list[T]:
    """std::partial_sort(first, last, last): __make_heap then __sort_heap."""
    a = list(items)

    def adjust(hole: int, length: int, value: T) -> None:
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if comp(a[child], a[child - 1]):
                child -= 1
            a[hole] = a[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[hole] = a[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and comp(a[parent], value):
            a[hole] = a[parent]
            hole = parent
            parent = (hole - 1) // 2
        a[hole] = value

    for parent in range((len(a) - 2) // 2, -1, -1):
        adjust(parent, len(a), a[parent])
    for end in range(len(a) - 1, 0, -1):
        value, a[end] = a[end], a[0]
        adjust(0, end, value)
    return a


def std_stable_sort(items: list[T], comp: Comp) -> list[T]:
    a = list(items)
    n = len(a)

    def insertion_sort(lst: list[T], first: int, last: int) -> None:
        for i in range(first + 1, last):
            val = lst[i]
            if comp(val, lst[first]):
                lst[first:i + 1] = [val] + lst[first:i]
                continue
            j = i
            while comp(val, lst[j - 1]):
                lst[j] = lst[j - 1]
                j -= 1
            lst[j] = val

    def merge(first: list[T], second: list[T]) -> list[T]:  # __move_merge
        out, i, j = [], 0, 0
        while i < len(first) and j < len(second):
            if comp(second[j], first[i]):
                out.append(second[j])
                j += 1
            else:
                out.append(first[i])
                i += 1
        return out + first[i:] + second[j:]

    def merge_backward(first: list[T], second: list[T]) -> list[T]:
        out: list[T] = []  # __move_merge_adaptive_backward, built from the back
        i, j = len(first) - 1, len(second) - 1
        while i >= 0 and j >= 0:
            if comp(second[j], first[i]):
                out.append(first[i])
                i -= 1
            else:
                out.append(second[j])
                j -= 1
        return first[:i + 1] + second[:j + 1] + out[::-1]

    def merge_sort_with_buffer(part: list[T]) -> list[T]:
        for k in range(0, len(part), 7):  # __chunk_insertion_sort, chunks of 7
            insertion_sort(part, k, min(k + 7, len(part)))
        step = 7
        while step < len(part):
            part = [x for k in range(0, len(part), 2 * step)
                    for x in merge(part[k:k + step], part[k + step:k + 2 * step])]
            step *= 2
        return part

    if n < 2:
        return a
    half = (n + 1) // 2
    first, second = merge_sort_with_buffer(a[:half]), merge_sort_with_buffer(a[half:])
    return merge(first, second) if half == n - half else merge_backward(first, second)
