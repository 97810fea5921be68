"""mrope.Model: a model's position service, with HF- and vLLM-style calls."""
import json
import os

from mrope import _mrope
from mrope import _tensors


def _host(values):
    """``values`` as the extension reads them: torch tensors become numpy arrays."""
    if not _tensors.torch_loaded():
        return values
    return tuple(map(_tensors.to_host, values))


def conventions():
    """Every convention mrope has per family, as dicts: family, name (by the first release it
    reproduces, e.g. ``"transformers-5.3"``), aliases (its short name and the family's preset
    under it), reference (``"transformers"`` or ``"vllm"``), first and last (the release range
    it reproduces; None where no release is verified), verified (how)."""
    return _mrope.conventions()


class Model:
    """A model's M-RoPE position parameters, built once; immutable and thread-safe.

    Make one with ``Model.from_config``. Its family and conventions come from the C++ side,
    so every family mrope supports works here.
    """

    __slots__ = ("_impl", "_positional", "_source")

    def __init__(self, impl, source):
        """Wraps an ``_mrope.Model`` made from ``source`` (see ``_load``); use
        ``Model.from_config``."""
        object.__setattr__(self, "_impl", impl)
        object.__setattr__(self, "_source", source)
        # The arguments HF's get_rope_index of this family takes after input_ids, in its
        # reference's order under the model's convention (the family row's rope_index), so
        # that HF's positional calls (Qwen2VLModel.forward passes attention_mask 4th) work.
        object.__setattr__(self, "_positional", tuple(impl.rope_index_arguments))

    def __setattr__(self, name, value):
        raise AttributeError("mrope.Model is immutable")

    @classmethod
    def from_config(cls, path_or_preset, overrides=None, convention=None):
        """Loads a model.

        Args:
            path_or_preset: an HF ``config.json``, a checkpoint directory (its config.json), a
                ModelParams textproto, or a preset name (e.g. ``"qwen2_5_vl"``; an unknown name
                raises ValueError listing the presets); with ``convention``, a family name.
            convention: optional, whose values to reproduce: a release,
                ``"transformers==5.23.0"`` or ``"vllm==0.33.0"`` (the convention whose range
                covers it for the family, else ValueError naming the releases mrope has
                verified for it), ``"installed"`` (the installed transformers' release), or a
                convention's name (``"transformers-5.3"``) or alias (``"hf_v5"``).
                ``mrope.conventions()`` lists them. The model is the family's preset under it.
            overrides: optional dict replacing preset values (presets only), with the golden
                files' flat ``config`` keys: the family's ``*_token_id``,
                ``spatial_merge_size``, and where the family reads them
                ``temporal_merge_size``, ``tokens_per_second``, ``video_time_rounding``
                (``"scale_then_truncate"`` or ``"truncate_interval_first"``),
                ``position_id_per_seconds``, ``seconds_per_chunk``; and the rope keys
                ``rope_theta``, ``head_dim``, ``hidden_size``, ``num_attention_heads``,
                ``partial_rotary_factor``, ``max_position_embeddings``,
                ``original_max_position_embeddings``, ``mrope_section``,
                ``mrope_interleaved``, ``rope_scaling`` (an object as in config.json), read as
                a config.json's are (mrope/service/preset_overrides.h). Unknown keys, wrong
                types, invalid values and keys without effect on the resulting model (e.g.
                ``max_position_embeddings`` under the default rope type) raise ValueError
                naming the key; a value equal to the preset's is accepted.

        Note: an HF config.json of Qwen2.5-VL gives the production runtimes' video time
        rounding (scale then truncate); HF transformers v4 itself truncates the interval first
        (preset ``"qwen2_5_vl_hf"``, or ``overrides={"video_time_rounding":
        "truncate_interval_first"}``).
        """
        name = os.fspath(path_or_preset)
        if convention is not None:
            name = _mrope.convention_preset(name, convention)
        if overrides is None:
            impl = _mrope.Model.load(name)
            if impl.config_file is not None:
                return cls(impl, ("config",) + tuple(impl.config_file))
            return cls(impl, ("preset", name, None))
        overrides_json = json.dumps(overrides, sort_keys=True)
        return cls(_mrope.Model.with_overrides(name, overrides_json),
                   ("preset", name, overrides_json))

    # Pickling sends what the model was made from, not the model: ("preset", name,
    # overrides_json or None) or ("config", path, contents). The contents travel, so the file
    # need not exist where it is unpickled. Models made from the same source compare equal.
    def __reduce__(self):
        return _load, (self._source,)

    def __eq__(self, other):
        return isinstance(other, Model) and self._source == other._source

    def __hash__(self):
        return hash(self._source)

    name = property(lambda self: self._impl.name, doc="Preset name, config path or model_type.")
    family = property(lambda self: self._impl.family, doc="The model family, e.g. 'qwen3_vl'.")
    float_positions = property(lambda self: self._impl.float_positions,
                               doc="True when positions are float32 (Qwen3-Omni), else int64.")
    convention = property(lambda self: self._impl.convention,
                          doc="'hf_v4', 'hf_v5_2', 'hf_v5' (transformers' batching) or 'vllm'.")

    def __repr__(self):
        return f"mrope.Model({self.name!r}, family={self.family!r})"

    def _arguments(self, args, kwargs):
        """(image_grid_thw, video_grid_thw, the other arguments by name): HF's positional order
        resolved (the extension reads HF's and mrope's names and refuses others), torch tensors
        as numpy."""
        if len(args) > len(self._positional):
            raise TypeError(f"too many positional arguments: {self.family} takes "
                            f"{', '.join(self._positional)} after input_ids")
        for name, value in zip(self._positional, args):
            if name in kwargs:
                raise TypeError(f"got multiple values for argument '{name}'")
            kwargs[name] = value
        images = kwargs.pop("image_grid_thw", None)
        videos = kwargs.pop("video_grid_thw", None)
        if _tensors.torch_loaded():
            kwargs = {name: _tensors.to_host(value) for name, value in kwargs.items()}
        return images, videos, kwargs

    def get_rope_index(self, input_ids, *args, **kwargs):
        """HF's ``get_rope_index``: ``(position_ids [3, B, L], mrope_position_deltas [B, 1])``
        (HunYuan-VL: ``[len(mrope_section), B, L]``, one plane per XD-RoPE axis).

        A drop-in for ``Qwen2VLModel.get_rope_index`` and the other families' (same arguments,
        values, dtypes and shapes: int64, or float32 for Qwen3-Omni). Torch tensors in give
        torch tensors out, on input_ids' device.

        Args:
            input_ids: [B, L] token ids.
            *args: HF's further arguments in the order of the family's reference under the
                model's convention: ``image_grid_thw, video_grid_thw`` ([N, 3] (t, h, w) of
                the batch's images / videos), then attention_mask (Qwen2.5-VL:
                second_per_grid_ts, attention_mask; Omni: attention_mask, use_audio_in_video,
                audio_seqlens, second_per_grids; ERNIE: attention_mask, mm_token_type_ids).
                GLM-Image: ``image_grid_thw, images_per_sample, attention_mask``. HunYuan-VL:
                ``mm_token_type_ids, image_grid_thw, attention_mask``. Under
                ``hf_v5`` (transformers >= 5.3) ``mm_token_type_ids`` comes first:
                ``(input_ids, mm_token_type_ids, image_grid_thw, video_grid_thw, ...)``.
            **kwargs: any of those by name, and ``mm_token_type_ids`` ([B, L]: 0 text, 1 image,
                2 video; blocks are then its runs, checked against the ids; ``hf_v5`` and
                ERNIE need it), ``images_per_sample`` (GLM-Image), ``audio_feature_lengths``
                (= ``audio_seqlens``), ``video_second_per_grid`` (= ``second_per_grids``).

        Raises:
            ValueError: bad input, with mrope's message (row, token index, value).
        """
        images, videos, kwargs = self._arguments(args, kwargs)
        if not _tensors.torch_loaded():  # numpy or lists: nothing to convert on this side
            return self._impl.get_rope_index(input_ids, images, videos, kwargs)
        positions, deltas = self._impl.get_rope_index(*_host((input_ids, images, videos)),
                                                      kwargs)
        tensor = _tensors.first_tensor(input_ids)
        return _tensors.like(positions, tensor), _tensors.like(deltas, tensor)

    def plan(self, input_ids, *args, **kwargs):
        """Plans a batch (arguments as ``get_rope_index``) and returns an ``mrope.Plan``.

        A plan gives windows (``plan.positions(begin, end)``), decode positions
        (``plan.decode_positions(steps)``) and cos/sin (``plan.cos_sin(begin, end)``) as numpy
        arrays without planning again, e.g. for chunked prefill.
        """
        images, videos, kwargs = self._arguments(args, kwargs)
        return self._impl.plan(*_host((input_ids, images, videos)), kwargs)

    layer_types = property(
        lambda self: tuple(self._impl.layer_types),
        doc="Each layer's attention type (config.json's ``layer_types``) for a model whose "
            "rotary is per layer type (Cohere Compass); () for one rotary for all layers.")

    def for_layer_type(self, layer_type):
        """The model with the rotary of attention layer type ``layer_type`` (positions
        unchanged), or None for a NoPE type: vLLM's ``get_rope(...)`` per layer, as
        ``config.rope_parameters.get(layer_type)`` builds it. Its cos_sin, plans' cos_sin and
        ``mrope.cuda`` ops use that rotary. For a model whose rotary is per layer type only
        (``layer_types``); ValueError otherwise, or for a type no layer has."""
        impl = self._impl.for_layer_type(layer_type)
        if not impl.has_rope:
            return None
        return Model(impl, ("layer_type", layer_type, self._source))

    def cos_sin(self, position_ids, *, transformers=None, layer_type=None):
        """The family's HF text rotary module: ``cos, sin = rotary_emb(x, position_ids)``.

        A drop-in for the module's forward (``Qwen2VLRotaryEmbedding`` and the other families'),
        in the layout of its release: from transformers 5.17 on [B, T, rotary_dim] with the
        sections applied (what ``apply_rotary_pos_emb`` takes), before it the family's own
        (Qwen2-VL's [3, B, T, rotary_dim] for ``apply_multimodal_rotary_pos_emb``).

        Args:
            position_ids: [3, B, T] (HunYuan-VL: [len(mrope_section), B, T]; or [B, T]:
                every axis the same) integers.
            transformers: the release whose module to follow, e.g. ``"4.57.6"``; default the
                installed transformers' version (ValueError when none is installed).
            layer_type: required for a model whose rotary is per layer type (Cohere Compass:
                ``rotary_emb(x, position_ids, layer_type)``), refused otherwise.

        Returns:
            (cos, sin) float32 (cast them to x's dtype as the module does); torch tensors on
            position_ids' device when a torch tensor came in. Values are HF's within 4 ulp
            (HF's angles and scaling bit for bit; cos/sin rounded from double). None for a
            NoPE layer type (HF's ``position_embeddings`` of its layers).
        """
        model = self
        if layer_type is not None:
            model = self.for_layer_type(layer_type)
            if model is None:
                return None
        cos, sin = model._impl.cos_sin(*_host((position_ids,)), transformers=transformers)
        if not _tensors.torch_loaded():
            return cos, sin
        tensor = _tensors.first_tensor(position_ids)
        return _tensors.like(cos, tensor), _tensors.like(sin, tensor)

    def compare(self, input_ids, *args, conventions=("hf_v4", "hf_v5_2", "vllm"), **kwargs):
        """The prompt under each convention side by side (``mrope explain --compare``).

        Arguments as ``get_rope_index``; ``conventions``: two or more of ``"hf_v4"``,
        ``"hf_v5_2"``, ``"hf_v5"``, ``"vllm"``. Returns ``(agree, report)``: whether positions,
        deltas and first decode positions agree, and the report (deltas and first decode
        position per convention, the first diverging token, the rules that differ).
        """
        images, videos, kwargs = self._arguments(args, kwargs)
        return self._impl.compare(*_host((input_ids, images, videos)), kwargs, list(conventions))

    def get_mrope_input_positions(self, input_tokens, *args, **kwargs):
        """vLLM's per-request call: ``(positions [3, seq_len - context_len], delta)``.

        Two forms:

        - ``get_mrope_input_positions(input_tokens, mm_features)``: current vLLM's call. Each
          feature is a vLLM ``MultiModalFeatureSpec`` or a dict with the same fields
          (``modality``, ``mm_position.offset`` / ``.length``, ``data`` holding
          ``image_grid_thw`` or ``video_grid_thw`` and, for Qwen2.5-VL videos,
          ``second_per_grid_ts``). Planned under the vLLM convention of the model's family,
          whatever the model's own. Keywords: ``context_len``, ``seq_len``, and for prompts
          whose videos vLLM pruned with EVS, ``keep_masks`` (one 0/1 list of t*h'*w' per
          video), ``embed_dtype`` (``"bfloat16"`` or ``"float32"``: the dtype that carries
          the position channels; bfloat16 rounds relative positions of 256 and more, as vLLM
          does) and ``video_pruning_rate`` (checked against each mask when given).
        - ``get_mrope_input_positions(input_tokens, image_grid_thw=None, video_grid_thw=None,
          second_per_grid_ts=None, context_len=0, seq_len=None, audio_feature_lengths=None,
          use_audio_in_video=False)``: the older grid form, under the model's convention.

        Seconds per grid follow the dtype given (HF and vLLM read the processor's float32; a
        float64 or a Python float is used as it is).

        Returns:
            positions (numpy int64, float32 for Qwen3-Omni; torch when torch tensors came in)
            and the delta: decode token i >= n takes position i + delta on every axis.
        """
        if "mm_features" in kwargs or (args and _are_features(args[0])):
            return self._from_features(input_tokens, *args, **kwargs)
        return self._from_grids(input_tokens, *args, **kwargs)

    def plan_vllm(self, input_tokens, mm_features, keep_masks=None, embed_dtype="bfloat16",
                  video_pruning_rate=None):
        """Plans vLLM's ``get_mrope_input_positions(input_tokens, mm_features)`` request (see
        ``get_mrope_input_positions``) and returns an ``mrope.Plan``: windows for chunked
        prefill, decode steps, cos/sin, and for EVS requests ``plan.vllm_defects`` (where vLLM
        computes otherwise)."""
        features = [_feature_tuple(i, f) for i, f in enumerate(mm_features)]
        tokens, = _host((input_tokens,))
        masks = None if keep_masks is None else [_host((m,))[0] for m in keep_masks]
        return self._impl.plan_vllm(tokens, features, masks, embed_dtype, video_pruning_rate)

    def _from_features(self, input_tokens, mm_features=None, context_len=0, seq_len=None,
                       keep_masks=None, embed_dtype="bfloat16", video_pruning_rate=None):
        plan = self.plan_vllm(input_tokens, mm_features, keep_masks, embed_dtype,
                              video_pruning_rate)
        end = plan.row_lengths[0] if seq_len is None else seq_len
        positions = plan.positions(context_len, end)[:, 0, :]
        delta = plan.rope_deltas.item()
        if not _tensors.torch_loaded():
            return positions, delta
        return _tensors.like(positions, _tensors.first_tensor(input_tokens)), delta

    def _from_grids(self, input_tokens, image_grid_thw=None, video_grid_thw=None,
                    second_per_grid_ts=None, context_len=0, seq_len=None,
                    audio_feature_lengths=None, use_audio_in_video=False):
        tokens, images, videos, seconds, audio_lengths = _host(
            (input_tokens, image_grid_thw, video_grid_thw, second_per_grid_ts,
             audio_feature_lengths))
        seconds_arg = ("second_per_grid_ts" if self._impl.reads_second_per_grid_ts
                       else "video_second_per_grid")
        plan = self._impl.plan([tokens], images, videos, {
            seconds_arg: seconds, "audio_feature_lengths": audio_lengths,
            "use_audio_in_video": bool(use_audio_in_video)})
        end = plan.row_lengths[0] if seq_len is None else seq_len
        positions = plan.positions(context_len, end)[:, 0, :]
        if not _tensors.torch_loaded():
            return positions, plan.rope_deltas.item()
        tensor = _tensors.first_tensor(image_grid_thw, video_grid_thw)
        return _tensors.like(positions, tensor), plan.rope_deltas.item()


def _are_features(value):
    """Whether ``value`` is vLLM's mm_features list (else the older form's image grids)."""
    if not isinstance(value, (list, tuple)):
        return False
    return not value or isinstance(value[0], dict) or hasattr(value[0], "modality")


def _field(obj, name):
    """``obj[name]`` for a mapping, else ``obj.name`` (vLLM's objects or plain dicts)."""
    if isinstance(obj, dict) or hasattr(obj, "keys"):
        return obj.get(name) if hasattr(obj, "get") else obj[name]
    return getattr(obj, name, None)


def _plain(value):
    """A grid or a number as Python values: vLLM's field elements hold them in ``.data``;
    tensors and arrays keep their dtype until ``tolist``."""
    if value is not None and not hasattr(value, "tolist") and hasattr(value, "data"):
        value = value.data
    return value.tolist() if hasattr(value, "tolist") else value


def _feature_tuple(index, feature):
    """(modality, offset, length, (t, h, w), second_per_grid_ts or None) of one feature."""
    modality = _field(feature, "modality")
    position = _field(feature, "mm_position")
    data = _field(feature, "data")
    if modality is None or position is None or data is None:
        raise ValueError(f"mm_features[{index}]: expected modality, mm_position and data")
    grid = _plain(_field(data, f"{modality}_grid_thw"))
    if grid is None:
        raise ValueError(f"mm_features[{index}]: data has no {modality}_grid_thw")
    grid = tuple(int(x) for x in (grid[0] if grid and isinstance(grid[0], list) else grid))
    if len(grid) != 3:
        raise ValueError(f"mm_features[{index}]: {modality}_grid_thw must be (t, h, w), "
                         f"got {grid}")
    seconds = _plain(_field(data, "second_per_grid_ts"))
    if isinstance(seconds, list):
        seconds = seconds[0] if len(seconds) == 1 else None
    return (str(modality), int(_field(position, "offset")), int(_field(position, "length")),
            grid, None if seconds is None else float(seconds))


def _load(source):
    """The Model made from ``source`` (``Model.__reduce__``)."""
    kind, name, detail = source
    if kind == "layer_type":  # Model.for_layer_type(name) of the model made from detail
        return _load(detail).for_layer_type(name)
    if kind == "config":
        return Model(_mrope.Model.from_config_file(name, detail), source)
    if detail is None:
        return Model(_mrope.Model.load(name), source)
    return Model(_mrope.Model.with_overrides(name, detail), source)
