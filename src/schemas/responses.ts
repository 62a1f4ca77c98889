import { z } from 'zod';

// Response schemas are loose: fields the API adds later pass through untouched, while a missing or
// wrongly typed documented field is an OAResponseValidationError.

/** Endpoints 1 and 2. `expires_in` is documented as the text `1h`; a number of seconds is accepted too. */
export const TokenPairSchema = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.union([z.string(), z.number()]),
});

/** The single-user sends (endpoints 4, 5, 12, 13) answer with the text `success`. */
export const SuccessSchema = z.literal('success');

/** Endpoint 3: the greeting configured in the OA. */
export const GreetingSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  slug: z.string(),
  data: z.array(z.looseObject({ type: z.string(), msg: z.string() })),
});

/** One item as the API accepted it, inside a broadcast record. */
export const AcceptedItemSchema = z.looseObject({
  type: z.string(),
  msg: z.union([z.string(), z.array(z.string())]),
});

/** Endpoints 6, 7, 8. */
export const BroadcastRecordSchema = z.looseObject({
  id: z.string(),
  data: z.array(AcceptedItemSchema),
  broadcast_at: z.string(),
  created_at: z.string(),
  estimate_time_detail: z.looseObject({ total_job_time_minutes: z.number() }),
});

/** Endpoint 9. */
export const UploadImageResultSchema = z.looseObject({ src_file: z.string(), url: z.string() });
/** Endpoint 10. */
export const UploadVideoResultSchema = z.looseObject({ ticket_id: z.string() });
/** Endpoint 11: all four values go unchanged to `sendAudio` or `items.audio`. */
export const UploadAudioResultSchema = z.looseObject({
  audio_url: z.string(),
  audio_uuid: z.string(),
  audio_size: z.number(),
  audio_duration: z.number(),
});

export type TokenPair = z.infer<typeof TokenPairSchema>;
export type SendResult = z.infer<typeof SuccessSchema>;
export type Greeting = z.infer<typeof GreetingSchema>;
export type AcceptedItem = z.infer<typeof AcceptedItemSchema>;
export type BroadcastRecord = z.infer<typeof BroadcastRecordSchema>;
export type UploadImageResult = z.infer<typeof UploadImageResultSchema>;
export type UploadVideoResult = z.infer<typeof UploadVideoResultSchema>;
export type UploadAudioResult = z.infer<typeof UploadAudioResultSchema>;
