"""The C codec extension (spindle_engine._codec); everything else is in pyproject.toml. If it
cannot be built, the package still works with the pure-Python codec (codec.py)."""
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler or headers: pure Python it is
            print(f"spindle_engine: C codec not built ({exc}); using the pure-Python codec")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"spindle_engine: C codec not built ({exc}); using the pure-Python codec")


setup(ext_modules=[Extension("spindle_engine._codec", ["spindle_engine/_codec.c"],
                             extra_compile_args=["-O2"])],
      cmdclass={"build_ext": OptionalBuildExt})
