#!/bin/bash
docker run --rm --gpus all --ipc=host --network=host \
    --ulimit memlock=-1 --ulimit stack=67108864 --cap-add SYS_NICE \
    nvcr.io/nvidia/pytorch:24.05-py3 \
    /opt/nccl-tests/build/all_reduce_perf -b 8 -e 1G -f 2 -g 8
