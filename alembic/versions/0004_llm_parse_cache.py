"""llm boundary parser cache

Revision ID: 0004_llm_parse_cache
Revises: 0002_api
Create Date: 2026-11-23 10:00:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0004_llm_parse_cache'
down_revision: Union[str, None] = '0002_api'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('llm_parse_cache',
    sa.Column('model_id', sa.String(length=200), nullable=False),
    sa.Column('prompt_version', sa.String(length=20), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('items', sa.JSON(), nullable=False),
    sa.Column('dropped', sa.JSON(), nullable=True),
    sa.Column('tokens', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), server_default=sa.text('(CURRENT_TIMESTAMP)'), nullable=False),
    sa.PrimaryKeyConstraint('model_id', 'prompt_version', 'content_hash')
    )


def downgrade() -> None:
    op.drop_table('llm_parse_cache')
