"""Kubernetes settings carried by the assets themselves (read by dagster-k8s when the run
launcher or the step executor is Kubernetes; ignored everywhere else).

The generation step asks for one NVIDIA GPU and lands on a GPU node; docs/operations.md shows
the Helm values that go with it.
"""

GPU_POOL = "gpu"  # concurrency pool: the instance's limit (deploy/dagster.yaml) keeps one GPU step per device

GPU_OP_TAGS = {
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
