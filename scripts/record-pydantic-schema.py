#!/usr/bin/env python3
"""Records the exact request body the official Python `openai` client sends for
`client.chat.completions.parse(..., response_format=<pydantic model>)`.

A nested pydantic model (an Optional[str] field, a nested list of sub-models, a
Literal, bounds and descriptions) goes through the client's own strict transform
(all properties required, additionalProperties false, Optional as anyOf with
null, $defs with local $ref). The client is pointed at a throwaway local HTTP
server that writes the body it receives to the fixture and answers with a
canned completion, so nothing leaves the machine.

    python3 -m venv /tmp/pyd-venv && /tmp/pyd-venv/bin/pip install pydantic openai
    /tmp/pyd-venv/bin/python scripts/record-pydantic-schema.py

writes tests/fixtures/pydantic-nested-optional.request.json and
tests/fixtures/pydantic-discriminated-union.request.json (used by
tests/structured-output-compat.test.ts).
"""
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Annotated, List, Literal, Optional, Union

import openai
import pydantic
from openai import OpenAI
from pydantic import BaseModel, Field

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')


class Address(BaseModel):
    city: str
    street: Optional[str] = None


class Attendee(BaseModel):
    name: str
    role: Optional[str] = None


class Meeting(BaseModel):
    """A meeting, as the text states it."""

    kind: Literal['meeting']
    title: str = Field(description='What the meeting is about.')
    room: Optional[str] = None
    hour: int = Field(ge=0, le=23)
    priority: Literal['low', 'medium', 'high']
    location: Address
    attendees: List[Attendee] = Field(max_length=5)


class Call(BaseModel):
    kind: Literal['call']
    hour: int


class Visit(BaseModel):
    kind: Literal['visit']
    city: str
    street: Optional[str] = None


class Appointment(BaseModel):
    """A discriminated union (oneOf with a discriminator), as pydantic writes it."""

    event: Annotated[Union[Call, Visit], Field(discriminator='kind')]


captured = {}
canned = {}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        captured['path'] = self.path
        captured['body'] = json.loads(self.rfile.read(int(self.headers['content-length'])))
        reply = json.dumps({
            'id': 'chatcmpl-record', 'object': 'chat.completion', 'created': 0, 'model': captured['body']['model'],
            'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': json.dumps(canned['answer']), 'refusal': None}, 'finish_reason': 'stop', 'logprobs': None}],
            'usage': {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2},
        }).encode()
        self.send_response(200)
        self.send_header('content-type', 'application/json')
        self.send_header('content-length', str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def record(client, model, content, answer, fixture):
    """One .parse() call; the body it sent goes to the fixture, after checking the client parsed the canned answer."""
    canned['answer'] = answer
    completion = client.chat.completions.parse(model='svc-workspace', messages=[{'role': 'user', 'content': content}], response_format=model)
    assert completion.choices[0].message.parsed == model.model_validate(answer)
    assert captured['path'] == '/v1/chat/completions', captured['path']
    path = os.path.normpath(os.path.join(FIXTURES, fixture))
    with open(path, 'w') as f:
        json.dump({
            '_recorded_with': {'openai': openai.__version__, 'pydantic': pydantic.VERSION, 'call': f'client.chat.completions.parse(response_format={model.__name__})'},
            'body': captured['body'],
        }, f, indent=2)
        f.write('\n')
    print(f'wrote {path}')


def main():
    server = HTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = OpenAI(api_key='record-only', base_url=f'http://127.0.0.1:{server.server_port}/v1', max_retries=0)
    record(
        client,
        Meeting,
        'Plan the design review. The title is Q3 design review. The hour is 14. This is high priority. The city is Berlin. The name is Ada.',
        {'kind': 'meeting', 'title': 'x', 'room': None, 'hour': 9, 'priority': 'low', 'location': {'city': 'x', 'street': None}, 'attendees': []},
        'pydantic-nested-optional.request.json',
    )
    record(
        client,
        Appointment,
        'Book a visit to the new office. The city is Lyon.',
        {'event': {'kind': 'call', 'hour': 9}},
        'pydantic-discriminated-union.request.json',
    )
    server.shutdown()


if __name__ == '__main__':
    main()
