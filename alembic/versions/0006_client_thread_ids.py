"""client-chosen thread ids, unique per tenant, mapped to a checkpointer key; thread metadata

Revision ID: 0006_client_thread_ids
Revises: 0005_generation_leases

``threads`` was keyed by ``thread_id`` alone, and that id was also the checkpointer's key. Now a thread is keyed
by ``(tenant, thread_id)`` — a client may name its threads, and two tenants may pick the same name — and
``checkpoint_id`` (unique) is the key of its state in the checkpointer. Existing threads keep their state: their
``checkpoint_id`` is their old id. ``qa_records.checkpoint_id`` says which thread of an id a record belongs to
(a deleted thread's records stay, and the id may be used again). The table is rebuilt (create, copy, drop, rename) because SQLite cannot
change a primary key in place; the same steps run on PostgreSQL, which then gets back its usual key name.
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0006_client_thread_ids"
down_revision: Union[str, None] = "0005_generation_leases"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

COMMON = "kb, title, turns, created_at, updated_at"


def _new_threads(name: str) -> None:
    op.create_table(
        name,
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column("thread_id", sa.String(length=128), nullable=False),
        sa.Column("checkpoint_id", sa.String(length=64), nullable=False),
        sa.Column("kb", sa.String(length=200), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), server_default=sa.text("(CURRENT_TIMESTAMP)"), nullable=False),
        sa.Column("updated_at", sa.DateTime(), server_default=sa.text("(CURRENT_TIMESTAMP)"), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "thread_id"),
        sa.UniqueConstraint("checkpoint_id", name="uq_threads_checkpoint_id"),
    )


def _swap(new: str) -> None:
    """Drop ``threads`` and give ``new`` its name (and, on PostgreSQL, its primary key's usual name)."""
    op.drop_index("ix_threads_tenant_updated", table_name="threads")
    op.drop_table("threads")
    op.rename_table(new, "threads")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE threads RENAME CONSTRAINT {new}_pkey TO threads_pkey")


def upgrade() -> None:
    _new_threads("threads_0006")
    op.execute(f"INSERT INTO threads_0006 (tenant, thread_id, checkpoint_id, metadata, {COMMON}) "
               f"SELECT tenant, thread_id, thread_id, NULL, {COMMON} FROM threads")
    _swap("threads_0006")
    op.create_index("ix_threads_tenant_updated", "threads", ["tenant", "updated_at"], unique=False)
    with op.batch_alter_table("qa_records", schema=None) as batch_op:
        batch_op.alter_column("thread_id", existing_type=sa.String(length=64), type_=sa.String(length=128),
                              existing_nullable=False)
        batch_op.add_column(sa.Column("checkpoint_id", sa.String(length=64), nullable=True))
    op.execute("UPDATE qa_records SET checkpoint_id = thread_id")


def downgrade() -> None:
    # Only threads whose checkpoint key is their id fit the old layout (one id per thread, the checkpoint key).
    op.create_table(
        "threads_0005",
        sa.Column("thread_id", sa.String(length=64), nullable=False),
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column("kb", sa.String(length=200), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), server_default=sa.text("(CURRENT_TIMESTAMP)"), nullable=False),
        sa.Column("updated_at", sa.DateTime(), server_default=sa.text("(CURRENT_TIMESTAMP)"), nullable=False),
        sa.PrimaryKeyConstraint("thread_id"),
    )
    op.execute(f"INSERT INTO threads_0005 (thread_id, tenant, {COMMON}) "
               f"SELECT checkpoint_id, tenant, {COMMON} FROM threads WHERE thread_id = checkpoint_id")
    _swap("threads_0005")
    op.create_index("ix_threads_tenant_updated", "threads", ["tenant", "updated_at"], unique=False)
    with op.batch_alter_table("qa_records", schema=None) as batch_op:
        batch_op.drop_column("checkpoint_id")
        batch_op.alter_column("thread_id", existing_type=sa.String(length=128), type_=sa.String(length=64),
                              existing_nullable=False)
