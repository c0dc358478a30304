"""Stage ``tasks`` (workflow/rules/tasks.smk): the task grid, teachers and their data."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "TaskSpec": "grid",
    "task_specs": "grid",
    "specs_of_rung": "grid",
    "chunks_of_rung": "grid",
    "mixing_operator": "mixing",
    "operator_terms": "mixing",
    "static_mixing": "mixing",
    "bilinear_coefficient": "mixing",
    "operator_terms_adjoint": "mixing",
    "apply_operator": "mixing",
    "haar_orthonormal": "make",
    "teacher_kernel": "make",
    "Teacher": "make",
    "draw_teacher": "make",
    "make_task": "make",
    "task_pair": "make",
    "generate_data": "data",
    "chunk_bounds": "data",
    "generate_part": "data",
    "load_task": "files",
    "stores_data": "files",
    "task_file_arrays": "files",
    "write_tasks": "stage",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
