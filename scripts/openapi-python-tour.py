"""A tour of the API through the Python client openapi-python-client generated from the document, as
an integrator installs it (`pip install <generated project>` into a virtualenv) and uses it
(test/api/openapi-clients.test.ts): sign up, then with the session's access token create a product,
a lead list, two leads over JSON and a campaign, and read a campaign that does not exist (404, parsed
as the generated ApiError model). Operations are found by operationId and request models through the
functions' annotations, so nothing but ApiError depends on how the generator names tags or models.
Prints what the client parsed, as JSON.

usage: python openapi-python-tour.py <input JSON>
  the input: {"package", "base_url", "email", "password", "name", "product", "list", "campaign",
              "people": [{"email", "first_name", "last_name"}, ...], "missing_campaign_id"}
"""

import importlib
import importlib.metadata
import json
import pkgutil
import re
import sys
import typing
import uuid

run = json.loads(sys.argv[1])
package = importlib.import_module(run["package"])
api = importlib.import_module(f"{run['package']}.api")
models = importlib.import_module(f"{run['package']}.models")
# The installed package, not a source tree next to this script or in the working directory.
distribution = importlib.metadata.packages_distributions().get(run["package"], [None])[0]


def operation(operation_id):
    """The generated endpoint module of an operation, under whichever tag the generator placed it."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", operation_id).lower()
    for found in pkgutil.walk_packages(api.__path__, f"{api.__name__}."):
        if found.name.rsplit(".", 1)[-1] == name:
            return importlib.import_module(found.name)
    raise SystemExit(f"operation {operation_id} was not generated (no module {name})")


def call(operation_id, body=None, **kwargs):
    """Calls the operation (its request model made from `body` with from_dict); fails unless a success
    was parsed into a generated model."""
    function = operation(operation_id).sync_detailed
    if body is not None:
        kwargs["body"] = model_of(typing.get_type_hints(function)["body"]).from_dict(body)
    response = function(**kwargs)
    if response.parsed is None or isinstance(response.parsed, models.ApiError) or not 200 <= response.status_code < 300:
        raise SystemExit(f"{operation_id}: {response.status_code} {response.content!r}")
    return response


def model_of(annotation):
    """The model class in an annotation such as `CreateAppBody` or `CreateAppBody | Unset`."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if hasattr(candidate, "from_dict"):
            return candidate
    raise SystemExit(f"no model class in {annotation!r}")


def summary(response, **fields):
    return {"status": int(response.status_code), "type": type(response.parsed).__name__, **fields}


public = package.Client(base_url=run["base_url"], raise_on_unexpected_status=True)
signup = call("signup", client=public, body={"email": run["email"], "password": run["password"], "name": run["name"]})
session = signup.parsed
client = package.AuthenticatedClient(base_url=run["base_url"], token=session.access_token, raise_on_unexpected_status=True)
app = call("createApp", client=client, body={"name": run["product"], "description": "made by the installed Python client"})
lead_list = call("createList", app_id=app.parsed.id, client=client, body={"name": run["list"]})
added = call("addListLeads", list_id=lead_list.parsed.id, client=client, body={"people": run["people"]})
campaign = call("createCampaign", app_id=app.parsed.id, client=client, body={"name": run["campaign"], "time_zone": "Europe/London"})

missing = operation("getCampaign").sync_detailed(campaign_id=uuid.UUID(run["missing_campaign_id"]), client=client)
# The documented 404 is parsed into the ApiError model; the same model reads the raw body.
from_dict = models.ApiError.from_dict(json.loads(missing.content))

print(
    json.dumps(
        {
            "package": {
                "file": package.__file__,
                "distribution": distribution,
                "version": importlib.metadata.version(distribution) if distribution else None,
            },
            "signup": summary(
                signup,
                user_id=str(session.user.id),
                email=session.user.email,
                name=session.user.name,
                token_type=session.token_type,
            ),
            "app": summary(app, id=str(app.parsed.id), name=app.parsed.name),
            "list": summary(
                lead_list,
                id=str(lead_list.parsed.id),
                app_id=str(lead_list.parsed.app_id),
                name=lead_list.parsed.name,
            ),
            "leads": summary(
                added,
                statuses=[str(item.status) for item in added.parsed.items],
                lead_ids=[str(item.lead_id) for item in added.parsed.items],
                created=added.parsed.totals.created,
                leads_added=added.parsed.totals.leads_added,
            ),
            "campaign": summary(
                campaign,
                id=str(campaign.parsed.id),
                app_id=str(campaign.parsed.app_id),
                name=campaign.parsed.name,
                state=str(campaign.parsed.status),
                time_zone=campaign.parsed.time_zone,
            ),
            "missing": summary(
                missing,
                is_api_error=isinstance(missing.parsed, models.ApiError),
                code=missing.parsed.error.code if isinstance(missing.parsed, models.ApiError) else None,
                from_dict_type=type(from_dict).__name__,
                from_dict_code=from_dict.error.code,
            ),
        }
    )
)
