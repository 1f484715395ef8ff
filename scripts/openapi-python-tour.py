"""Three calls through the Python client openapi-python-client generated from the document
(test/api/openapi-clients.test.ts): GET /api/users/me, POST /api/apps, GET /api/apps. Operations
are found by operationId, request models through the functions' annotations, so nothing here
depends on how the generator names tags or models. Prints what the client parsed, as JSON.

usage: python openapi-python-tour.py <dir holding outreach_client> <base url> <token> <product name>
"""

import importlib
import json
import pkgutil
import sys
import typing

out_dir, base_url, token, product_name = sys.argv[1:5]
sys.path.insert(0, out_dir)

# The generator's own module naming (`strings` in the pinned release, `utils` in older ones).
try:
    from openapi_python_client.strings import snake_case  # noqa: E402
except ImportError:
    from openapi_python_client.utils import snake_case  # noqa: E402

import outreach_client.api  # noqa: E402
from outreach_client import AuthenticatedClient  # noqa: E402


def operation(operation_id):
    name = snake_case(operation_id)
    for found in pkgutil.walk_packages(outreach_client.api.__path__, "outreach_client.api."):
        if found.name.rsplit(".", 1)[-1] == name:
            return importlib.import_module(found.name)
    raise SystemExit(f"operation {operation_id} was not generated (no module {name})")


def model_of(annotation):
    """The model class in an annotation such as `CreateAppBody` or `CreateAppBody | Unset`."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if hasattr(candidate, "from_dict"):
            return candidate
    raise SystemExit(f"no model class in {annotation!r}")


client = AuthenticatedClient(base_url=base_url, token=token, raise_on_unexpected_status=True)

get_me = operation("getMe")
post_apps = operation("createApp")
get_apps = operation("listApps")

me = get_me.sync_detailed(client=client)
body = model_of(typing.get_type_hints(post_apps.sync_detailed)["body"])
created = post_apps.sync_detailed(client=client, body=body.from_dict({"name": product_name, "description": "made by the generated Python client"}))
listed = get_apps.sync_detailed(client=client)

print(
    json.dumps(
        {
            "me": {"status": int(me.status_code), "type": type(me.parsed).__name__, "id": str(me.parsed.id), "email": me.parsed.email},
            "created": {
                "status": int(created.status_code),
                "type": type(created.parsed).__name__,
                "id": str(created.parsed.id),
                "name": created.parsed.name,
                "description": created.parsed.description,
                "created_at": type(created.parsed.created_at).__name__,
            },
            "listed": {
                "status": int(listed.status_code),
                "type": type(listed.parsed).__name__,
                "item_types": sorted({type(a).__name__ for a in listed.parsed.items}),
                "ids": [str(a.id) for a in listed.parsed.items],
                "names": [a.name for a in listed.parsed.items],
            },
        }
    )
)
