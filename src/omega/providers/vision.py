"""Which models take images, by name: for an OpenAI-compatible server (OpenAI's own, vLLM,
Ollama, ...) whose `[provider.<name>] vision` is unset, a model known to see images gets them as
images; any other gets the saved path only (and the person is told it was not looked at).
`vision = false` turns it off for a model listed here, `vision = true` on for one that is not."""

from __future__ import annotations

from fnmatch import fnmatchcase

# Model names as servers spell them (lower case; an `org/` prefix and an Ollama `:tag` are
# ignored). Only families whose every size takes images, or whose name says it does.
VISION_MODELS: tuple[str, ...] = (
    "gpt-4o*",
    "chatgpt-4o*",
    "gpt-4.1*",
    "gpt-4-turbo*",
    "gpt-4-vision*",
    "gpt-5*",
    "claude-*",
    "gemini-*",
    "llava*",
    "bakllava*",
    "qwen2-vl*",
    "qwen2.5-vl*",
    "qwen2.5vl*",
    "qwen-vl*",
    "llama3.2-vision*",
    "llama-3.2-*vision*",
    "llama4*",
    "gemma3*",
    "pixtral*",
    "minicpm-v*",
    "moondream*",
    "granite3.2-vision*",
)


def model_sees_images(model: str) -> bool:
    """Whether `model` is known to take images (see VISION_MODELS)."""
    name = model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]
    return bool(name) and any(fnmatchcase(name, pattern) for pattern in VISION_MODELS)
