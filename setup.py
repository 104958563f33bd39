"""Where the packages live: the code under ``src/``, and the Hydra configs under ``conf/`` at the repository root,
shipped inside the package as ``bargain_ray/conf`` (one copy in git, where Hydra users look for it). Everything else
about the package is in ``pyproject.toml``."""

from setuptools import find_packages, setup

setup(packages=[*find_packages("src"), "bargain_ray.conf"], package_dir={"": "src", "bargain_ray.conf": "conf"})
