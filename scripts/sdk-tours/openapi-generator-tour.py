"""The tour of the Python SDK openapi-generator's `python` generator makes from the document
(test/api/openapi-generator.test.ts, scripts/openapi-generator.ts), pip-installed as generated:
sign up, a product, a list, two leads over JSON, a campaign, and the typed 404 of a campaign that
does not exist. Prints what the SDK parsed, as JSON (type names show that answers became models).

usage: python openapi-generator-tour.py <base url> <email> <password> <product> <list> <campaign> <missing campaign id>
"""

import json
import sys

import outreach_sdk
from outreach_sdk.exceptions import ApiException, NotFoundException

base_url, email, password, product_name, list_name, campaign_name, missing_id = sys.argv[1:8]

with outreach_sdk.ApiClient(outreach_sdk.Configuration(host=base_url)) as anonymous:
    session = outreach_sdk.AuthApi(anonymous).signup(
        outreach_sdk.SignupBody(email=email, password=password, name="Generated Python SDK")
    )

# The document's `bearer` scheme takes the configuration's access_token.
config = outreach_sdk.Configuration(host=base_url, access_token=session.access_token)
with outreach_sdk.ApiClient(config) as client:
    app = outreach_sdk.AppsApi(client).create_app(
        outreach_sdk.CreateAppBody(name=product_name, description="made by the python SDK")
    )
    lists = outreach_sdk.ListsApi(client)
    lead_list = lists.create_list(app.id, outreach_sdk.CreateListBody(name=list_name))
    people = [
        outreach_sdk.PersonBody(email=f"ada.{session.user.id}@example.test", first_name="Ada", last_name="Lovelace"),
        outreach_sdk.PersonBody(email=f"grace.{session.user.id}@example.test", full_name="Grace Hopper"),
    ]
    added = lists.add_list_leads(lead_list.id, outreach_sdk.AddLeadsBody(people=people))
    campaigns = outreach_sdk.CampaignsApi(client)
    campaign = campaigns.create_campaign(
        app.id,
        outreach_sdk.CreateCampaignBody(name=campaign_name, time_zone="Europe/Berlin", daily_new_lead_cap=25),
    )

    # A missing campaign: the SDK raises its NotFoundException, with the body parsed into the ApiError
    # model (the operation's 404 response type) as `data`.
    try:
        found = campaigns.get_campaign(missing_id)
        raise SystemExit(f"get_campaign({missing_id}) answered a campaign: {found.id}")
    except NotFoundException as e:
        not_found = {
            "error": type(e).__name__,
            "is_api_exception": isinstance(e, ApiException),
            "status": e.status,
            "type": type(e.data).__name__,
            "code": e.data.error.code if e.data is not None else None,
            "request_id": e.data.error.request_id if e.data is not None else None,
        }

print(
    json.dumps(
        {
            "signup": {"type": type(session).__name__, "user_id": str(session.user.id), "email": session.user.email},
            "app": {
                "type": type(app).__name__,
                "id": str(app.id),
                "name": app.name,
                "description": app.description,
                "created_at": type(app.created_at).__name__,
            },
            "list": {"type": type(lead_list).__name__, "id": str(lead_list.id), "app_id": str(lead_list.app_id), "name": lead_list.name},
            "leads": {
                "type": type(added).__name__,
                "statuses": [i.status for i in added.items],
                "lead_ids": [str(i.lead_id) for i in added.items],
                "created": added.totals.created,
                "leads_added": added.totals.leads_added,
            },
            "campaign": {
                "type": type(campaign).__name__,
                "id": str(campaign.id),
                "app_id": str(campaign.app_id),
                "name": campaign.name,
                "status": campaign.status,
                "time_zone": campaign.time_zone,
                "daily_new_lead_cap": campaign.daily_new_lead_cap,
            },
            "not_found": not_found,
        }
    )
)
