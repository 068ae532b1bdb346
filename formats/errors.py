"""Typed errors for everything that reads outside input: model files, vocabularies, templates."""


class FormatError(ValueError):
    """Base of every error about a model file or its contents; the message says what and where."""


class GGUFError(FormatError):
    """A GGUF file is truncated, corrupted, hostile or uses something we do not support."""


class UnsupportedModelError(GGUFError):
    """The file is a valid GGUF model of an architecture the edge engine cannot run."""


class QuantizationError(FormatError):
    """A tensor cannot be (de)quantized with the requested type (unknown type, bad row size)."""


class TokenizerError(FormatError):
    """The tokenizer described by a model's metadata is missing, inconsistent or unsupported."""


class ChatTemplateError(FormatError):
    """A chat template failed to parse or render, or tried to leave its sandbox."""


class ConversionError(FormatError):
    """A checkpoint cannot be converted (unsupported architecture, missing or malformed files)."""
