#!/bin/bash
# rank launcher used by the team's job template (copied from the single-node dev setup)
export NCCL_DEBUG=INFO
docker run --rm --name trainer \
    --gpus all --shm-size=16g \
    -p 29500:29500 \
    -e NCCL_DEBUG -e MASTER_ADDR=dgx-a100-31 -e MASTER_PORT=29500 \
    -v /data/llm:/workspace/data:ro \
    nvcr.io/nvidia/pytorch:24.10-py3 \
    torchrun --nproc-per-node=8 --nnodes=2 --node-rank=0 --master-addr=dgx-a100-31 train.py --config llama-8b.yaml
