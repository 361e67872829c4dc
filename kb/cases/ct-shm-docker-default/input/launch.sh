#!/bin/bash
# launch one training container per node (rank 0 shown)
docker run -d --name trainer-0 --gpus all \
  --device=/dev/infiniband \
  --network=host \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=eth0 \
  -v /lustre/datasets:/data \
  nvcr.io/nvidia/pytorch:24.05-py3 \
  torchrun --nproc-per-node=8 --nnodes=2 --node-rank=0 --master-addr=10.40.12.17 train.py
