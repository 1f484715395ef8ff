import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { oauthStateProperties } from './oauth-state-properties.js';

// A pending OAuth connection of a booking provider (docs/meetings.md "OAuth"); its columns are those
// of every pending authorization (oauth-state-properties.ts), issued and spent by domain/auth/oauth-pending.ts.
export const BookingOAuthState = defineEntity({
  name: 'BookingOAuthState',
  tableName: 'booking_oauth_states',
  properties: oauthStateProperties,
});
export type IBookingOAuthState = InferEntity<typeof BookingOAuthState>;
