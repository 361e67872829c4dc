export HYDRA_FULL_ERROR=1
export NCCL_DEBUG=INFO
#export NCCL_SOCKET_IFNAME=ibp60s0
export NCCL_IB_DISABLE=0
export NCCL_IB_CUDA_SUPPORT=1
#export NCCL_SHM_DISABLE=1
#export GLOO_SOCKET_IFNAME=ib0,ib1,ib2,ib3,ib4,ib5,ib6,ib7
export CUDA_DEVICE_MAX_CONNECTIONS=1

export NCCL_SOCKET_IFNAME=^lo,docker,virbr,vmnet,vboxnet,wl,ww,ppp,eth,bond

export MASTER_PORT=$(expr 10000 + $(echo -n $SLURM_JOBID | tail -c 4))
export WORLD_SIZE=$(($SLURM_NNODES * $SLURM_NTASKS_PER_NODE))
echo "WORLD_SIZE="$WORLD_SIZE

master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$master_addr
echo "MASTER_ADDR="$MASTER_ADDR

module load cuda-dcgm/3.1.3.1
module load cuda12.1
module load docker
module load openmpi/gcc/64/4.1.2
module load openmpi4/gcc/4.1.2
module load ucx/1.10.1
module load gcc/11.2.0
