#!/bin/bash
# Issue 16, second machine: the O4 tail cut short on the first board, then JIT O0.
set -u
B=$(cd "$(dirname "$0")" && pwd)
bash $B/inst.sh tail 'instructions/(base|logic/(xor|not|cnot|shl|popc|clz|brev|bfe|bfi)|fp16/(add|mul|fma)_f16/)' O4 full 200
bash $B/inst.sh o0a 'instructions/(base|int)/' O0 full 340
