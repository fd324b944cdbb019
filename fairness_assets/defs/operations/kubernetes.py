"""Kubernetes settings carried by the assets themselves (read by dagster-k8s when the run
launcher or the step executor is Kubernetes; ignored everywhere else).

The generation step asks for one NVIDIA GPU and lands on a GPU node. dagster-k8s applies this
op tag where each step runs in its own pod (``FAIRNESS_EXECUTOR=k8s``, the k8s_job_executor);
the K8sRunLauncher alone uses run-level settings (docs/operations.md). When the models are
served by vLLM (``openai`` backend), generation needs no GPU: ``FAIRNESS_GENERATION_GPU=0``
drops the request (:func:`gpu_op_tags`: the op tags that the settings model's
``generation_gpu`` gives; docs/configuration.md).

``GPU_OP_TAGS`` is still read when this module is imported, not when the definitions load: the
``generations`` asset (defs/generation/assets.py) takes its op tags in its decorator, and
Dagster has no public way to replace an asset's op tags afterwards.
"""

from resources.settings import FairnessSettings, load_settings

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


def gpu_op_tags(settings: FairnessSettings) -> dict:
    """The op tags of the generation step: the GPU request, unless ``settings.generation_gpu`` is off."""
    return K8S_GPU_CONFIG if settings.generation_gpu else {}


GPU_OP_TAGS = gpu_op_tags(load_settings())  # at import: see the module docstring
