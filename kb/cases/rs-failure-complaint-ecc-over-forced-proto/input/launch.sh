#!/bin/bash
# sft launcher (copied from the old A100 cluster)
export NCCL_DEBUG=WARN
export NCCL_ALGO=Ring
export NCCL_PROTO=Simple
export OMP_NUM_THREADS=8
deepspeed --num_gpus 8 train_sft.py --deepspeed ds_zero2.json \
    --model_name_or_path /models/base-14b --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 --bf16 --output_dir /ckpt/sft-14b
