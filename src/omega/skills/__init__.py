"""Skills (`skills/<name>/SKILL.md`) and projects (`projects/<name>/ROLE.md`)."""

from omega.skills.bundled import bundled_skill_names, deploy_bundled_skills
from omega.skills.lessons import LESSONS_HEADING, append_lesson
from omega.skills.projects import ROLE_FILE, Project, ProjectCatalog
from omega.skills.skills import (
    SKILL_FILE,
    Skill,
    SkillCatalog,
    SkillError,
    load_skills,
    match_triggers,
    parse_skill,
)

__all__ = [
    "LESSONS_HEADING",
    "ROLE_FILE",
    "SKILL_FILE",
    "Project",
    "ProjectCatalog",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "append_lesson",
    "bundled_skill_names",
    "deploy_bundled_skills",
    "load_skills",
    "match_triggers",
    "parse_skill",
]
