"""Kubernetes settings carried by the assets themselves (read by dagster-k8s when the run
launcher or the step executor is Kubernetes; ignored everywhere else).

The generation step asks for one NVIDIA GPU and lands on a GPU node. dagster-k8s applies this
op tag where each step runs in its own pod (``FAIRNESS_EXECUTOR=k8s``, the k8s_job_executor);
the K8sRunLauncher alone uses run-level settings (docs/operations.md). When the models are
served by vLLM (``openai`` backend), generation needs no GPU: ``FAIRNESS_GENERATION_GPU=0``
drops the request (read when the code location loads, through the settings model:
docs/configuration.md).
"""

from resources.settings import load_settings

GPU_POOL = "gpu"  # concurrency pool: the instance's limit (deploy/dagster.yaml) keeps one GPU step per device

K8S_GPU_CONFIG = {
    "dagster-k8s/config": {
        "container_config": {
            "resources": {
                "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"},
                "limits": {"memory": "64Gi", "nvidia.com/gpu": "1"},
            },
        },
        "pod_spec_config": {
            "node_selector": {"nvidia.com/gpu.present": "true"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    },
}

GPU_OP_TAGS = K8S_GPU_CONFIG if load_settings().generation_gpu else {}
