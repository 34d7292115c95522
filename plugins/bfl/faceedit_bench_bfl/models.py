"""The BFL models these editors call: endpoint, request schema, limits and list price of each.

From the BFL API reference (``api.bfl.ai/openapi.json``): every model is its own endpoint
``POST /v1/<model>``; Kontext takes ``FluxKontextProInputs`` (``safety_tolerance`` 0-6,
``prompt_upsampling``), FLUX.2 [pro] ``Flux2Inputs`` (0-5, ``disable_pup``), FLUX.2 [flex]
``Flux2FlexInputs`` (0-5, ``prompt_upsampling``, ``steps``, ``guidance``). Each takes the image
to edit as ``input_image`` (base64 or URL), ``seed`` and ``output_format`` (``jpeg`` | ``png``).

BFL allows 24 active tasks per account on most endpoints and 6 on ``flux-kontext-max``.
List prices (1 credit = 0.01 USD), read on :data:`AS_OF` from BFL's published pricing: Kontext
[pro] 4 credits and [max] 8 credits per image, flat; FLUX.2 is priced per megapixel, first
output MP + each further output MP + each input MP ([pro] 3 + 1.5 / MP, [flex] 5 + 5 / MP),
so an edit with one input of at most 1 MP costs at most 4.5 ([pro]) or 10 ([flex]) credits:
the per-image price here, an upper estimate for faces up to 1 MP. BFL's own figure for each
task (``cost`` in credits) is recorded with every edit as ``provider_credits``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

AS_OF = "2026-12-01"


@dataclass(frozen=True)
class Model:
    endpoint: str  # POST /v1/<endpoint>; also the exact model version BFL serves there
    title: str
    schema: str  # the request schema's name in the OpenAPI reference
    safety_max: int
    active_tasks: int  # BFL's limit on tasks in flight for this endpoint
    usd_per_image: float | None  # list price, None when BFL publishes none
    upsampling_field: str  # how the schema switches prompt upsampling
    diffusion_controls: bool = False  # takes steps and guidance

    def prices(self) -> dict[str, Any]:
        if self.usd_per_image is None:
            return {}
        return {"images_out": self.usd_per_image, "as_of": AS_OF}


MODELS = MappingProxyType({m.endpoint: m for m in (
    Model("flux-kontext-pro", "FLUX.1 Kontext [pro]", "FluxKontextProInputs", 6, 24, 0.04, "prompt_upsampling"),
    Model("flux-kontext-max", "FLUX.1 Kontext [max]", "FluxKontextProInputs", 6, 6, 0.08, "prompt_upsampling"),
    Model("flux-2-pro", "FLUX.2 [pro]", "Flux2Inputs", 5, 24, 0.045, "disable_pup"),
    Model("flux-2-pro-preview", "FLUX.2 [pro] preview", "Flux2Inputs", 5, 24, None, "disable_pup"),
    Model("flux-2-flex", "FLUX.2 [flex]", "Flux2FlexInputs", 5, 24, 0.10, "prompt_upsampling",
          diffusion_controls=True),
)})

#: The regional endpoints BFL documents: global (routes to any cluster, with failover), EU, US.
REGIONS = MappingProxyType({"global": "https://api.bfl.ai", "eu": "https://api.eu.bfl.ai",
                            "us": "https://api.us.bfl.ai"})
